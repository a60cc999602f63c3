// Customers: their budgets and rate limits with usage, their contact email, teams and virtual keys.
import { OwnersPage } from '../teams/OwnersPage.tsx';

export default function CustomersPage() {
  return <OwnersPage kind="customer" />;
}
