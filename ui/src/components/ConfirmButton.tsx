// A destructive action asks first, in a dialog that keyboard users can answer (focus moves into it).
import { Button, type ButtonProps, Group, Modal, Text } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';

export function ConfirmButton(props: {
  label: string;
  confirm: string;
  onConfirm: () => void;
  ariaLabel?: string;
  loading?: boolean;
  size?: ButtonProps['size'];
}) {
  const [opened, { open, close }] = useDisclosure(false);
  return (
    <>
      <Button
        color="red"
        variant="light"
        size={props.size}
        onClick={open}
        aria-label={props.ariaLabel}
        loading={props.loading}
      >
        {props.label}
      </Button>
      <Modal opened={opened} onClose={close} title="Please confirm">
        <Text mb="md">{props.confirm}</Text>
        <Group justify="flex-end">
          <Button variant="default" onClick={close} data-autofocus>
            Cancel
          </Button>
          <Button
            color="red"
            onClick={() => {
              close();
              props.onConfirm();
            }}
          >
            {props.label}
          </Button>
        </Group>
      </Modal>
    </>
  );
}
