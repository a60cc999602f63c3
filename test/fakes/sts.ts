// Fake AWS STS: AssumeRoleWithWebIdentity (what IRSA and the AWS SDK's web-identity provider call) in the awsQuery
// wire format: a form-encoded POST to `/`, XML answers and XML errors, as the AWS SDK's STS client expects them.
import type { ServerResponse } from 'node:http';
import { FakeServer, type RecordedRequest } from './server.ts';

export class StsFake extends FakeServer {
  /** The only web identity token accepted (what the token file must hold). */
  acceptedToken = 'eyJhbGciOiJSUzI1NiJ9.fake-web-identity';
  /** Role ARNs that may be assumed with the accepted token. */
  roleArns = new Set(['arn:aws:iam::123456789012:role/gateway']);
  /** Lifetime of issued credentials. */
  credentialSeconds = 3600;
  accessKeyId = 'ASIAFAKESTSFAKESTS';
  secretAccessKey = 'sts/fake+secret';
  /** Session tokens handed out, in order (`sts-session-1`, ...). */
  readonly issued: string[] = [];

  constructor() {
    super([{ method: 'POST', path: '/', handler: (req, res) => this.answer(req, res) }]);
  }

  /** Forms of the AssumeRoleWithWebIdentity calls received. */
  calls(): URLSearchParams[] {
    return this.requests.map((r) => new URLSearchParams(r.body.toString('utf8')));
  }

  private answer(req: RecordedRequest, res: ServerResponse): void {
    const form = new URLSearchParams(req.body.toString('utf8'));
    if (form.get('Action') !== 'AssumeRoleWithWebIdentity' || form.get('Version') !== '2011-06-15') {
      error(
        res,
        400,
        'InvalidAction',
        `Could not find operation ${form.get('Action')} for version ${form.get('Version')}`,
      );
      return;
    }
    if (form.get('WebIdentityToken') !== this.acceptedToken) {
      error(res, 400, 'InvalidIdentityToken', "Couldn't retrieve verification key from your identity provider");
      return;
    }
    const role = form.get('RoleArn') ?? '';
    if (!this.roleArns.has(role)) {
      error(res, 403, 'AccessDenied', 'Not authorized to perform sts:AssumeRoleWithWebIdentity');
      return;
    }
    const session = form.get('RoleSessionName') ?? 'session';
    const token = `sts-session-${this.issued.length + 1}`;
    this.issued.push(token);
    const expiration = new Date(Date.now() + this.credentialSeconds * 1000).toISOString();
    const roleName = role.split('/').at(-1);
    res.writeHead(200, { 'content-type': 'text/xml', 'x-amzn-requestid': `sts-req-${this.issued.length}` });
    res.end(`<AssumeRoleWithWebIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
  <AssumeRoleWithWebIdentityResult>
    <SubjectFromWebIdentityToken>system:serviceaccount:default:gateway</SubjectFromWebIdentityToken>
    <Audience>sts.amazonaws.com</Audience>
    <AssumedRoleUser>
      <Arn>arn:aws:sts::123456789012:assumed-role/${roleName}/${session}</Arn>
      <AssumedRoleId>AROAFAKEFAKEFAKE:${session}</AssumedRoleId>
    </AssumedRoleUser>
    <Credentials>
      <SessionToken>${token}</SessionToken>
      <SecretAccessKey>${this.secretAccessKey}</SecretAccessKey>
      <Expiration>${expiration}</Expiration>
      <AccessKeyId>${this.accessKeyId}</AccessKeyId>
    </Credentials>
    <Provider>arn:aws:iam::123456789012:oidc-provider/oidc.eks.us-west-2.amazonaws.com/id/FAKE</Provider>
  </AssumeRoleWithWebIdentityResult>
  <ResponseMetadata><RequestId>sts-req-${this.issued.length}</RequestId></ResponseMetadata>
</AssumeRoleWithWebIdentityResponse>`);
  }
}

function error(res: ServerResponse, status: number, code: string, message: string): void {
  res.writeHead(status, { 'content-type': 'text/xml' });
  res.end(`<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
  <Error><Type>Sender</Type><Code>${code}</Code><Message>${message.replace(/'/g, '&apos;')}</Message></Error>
  <RequestId>sts-error</RequestId>
</ErrorResponse>`);
}

export function createStsFake(): StsFake {
  return new StsFake();
}
