// Customers: virtual keys belong to at most one customer; same shape as teams (see owners.ts).
import { OwnerService, type OwnerServiceDeps } from './owners.ts';

export class CustomerService extends OwnerService {
  constructor(deps: OwnerServiceDeps) {
    super('customer', deps);
  }
}
