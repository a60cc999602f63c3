// Teams: their budgets and rate limits with usage, the customer each belongs to, and their virtual keys.
import { OwnersPage } from './OwnersPage.tsx';

export default function TeamsPage() {
  return <OwnersPage kind="team" />;
}
