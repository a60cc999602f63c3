// Teams: virtual keys belong to at most one team; a team has budgets and a rate limit (see owners.ts).
import { OwnerService, type OwnerServiceDeps } from './owners.ts';

export class TeamService extends OwnerService {
  constructor(deps: OwnerServiceDeps) {
    super('team', deps);
  }
}
