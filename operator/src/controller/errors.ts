// What the controller machinery may say about an error. client-node's ApiException message embeds the whole
// response body and headers; we log the HTTP code plus the Status reason/message instead, never a body.
import { ApiException } from '@kubernetes/client-node';

/** The HTTP status of a failed Kubernetes API call, or undefined for any other error. */
export function apiStatusCode(error: unknown): number | undefined {
  return error instanceof ApiException && typeof error.code === 'number' ? error.code : undefined;
}

/** A Status object's reason and message from an ApiException body (a JSON string in client-node 2.x). */
function statusSummary(body: unknown): string {
  let parsed: unknown = body;
  if (typeof body === 'string') {
    try {
      parsed = JSON.parse(body);
    } catch {
      return '';
    }
  }
  if (typeof parsed !== 'object' || parsed === null) return '';
  const reason = 'reason' in parsed && typeof parsed.reason === 'string' ? parsed.reason : '';
  const message = 'message' in parsed && typeof parsed.message === 'string' ? parsed.message : '';
  return [reason, message].filter((s) => s !== '').join(': ');
}

const MAX_MESSAGE = 500;

/** A one-line, bounded description of an error that is safe to log and to place in a status condition. */
export function errorMessage(error: unknown): string {
  let text: string;
  const code = apiStatusCode(error);
  if (error instanceof ApiException) {
    const summary = statusSummary(error.body);
    text = summary === '' ? `HTTP ${code}` : `HTTP ${code} ${summary}`;
  } else if (error instanceof Error) {
    text = error.message === '' ? error.name : error.message;
  } else {
    text = String(error);
  }
  text = text.replace(/\s+/g, ' ').trim();
  return text.length > MAX_MESSAGE ? `${text.slice(0, MAX_MESSAGE)}…` : text;
}
