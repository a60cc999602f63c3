// Who is logged in. On load the page asks /api/session/is-auth-enabled (the HttpOnly cookie is sent by the
// browser; the answer hands back the session's CSRF token), then every API call carries that token.
import { useQueryClient } from '@tanstack/react-query';
import { createContext, type ReactNode, useCallback, useContext, useEffect, useMemo, useState } from 'react';
import { api, setCsrfToken, setUnauthorizedHandler } from '../api/client.ts';

export interface SessionUser {
  kind: 'admin' | 'basic';
  name: string;
}

interface AuthState {
  is_auth_enabled: boolean;
  has_valid_token: boolean;
  csrf_token?: string;
  expires_at?: string;
  user?: SessionUser;
}

interface LoginAnswer {
  csrf_token: string;
  expires_at: string;
  user: SessionUser;
}

export type SessionState =
  | { status: 'loading' }
  | { status: 'error'; error: unknown; retry: () => void }
  | { status: 'anonymous'; authEnabled: boolean; expired: boolean }
  | { status: 'authenticated'; user: SessionUser | undefined; expiresAt: string | undefined; authEnabled: boolean };

interface SessionApi {
  state: SessionState;
  login(username: string, password: string): Promise<void>;
  logout(): Promise<void>;
}

const SessionContext = createContext<SessionApi | undefined>(undefined);

export function SessionProvider({ children }: { children: ReactNode }) {
  const queryClient = useQueryClient();
  const [state, setState] = useState<SessionState>({ status: 'loading' });

  const load = useCallback(async () => {
    setState({ status: 'loading' });
    try {
      const s = await api.get<AuthState>('/session/is-auth-enabled');
      if (!s.is_auth_enabled) {
        setCsrfToken(undefined);
        setState({ status: 'authenticated', user: undefined, expiresAt: undefined, authEnabled: false });
      } else if (s.has_valid_token && s.csrf_token) {
        setCsrfToken(s.csrf_token);
        setState({ status: 'authenticated', user: s.user, expiresAt: s.expires_at, authEnabled: true });
      } else {
        setCsrfToken(undefined);
        setState({ status: 'anonymous', authEnabled: true, expired: false });
      }
    } catch (error) {
      setState({ status: 'error', error, retry: () => void load() });
    }
  }, []);

  useEffect(() => {
    void load();
    // A 401 from any call: the session ended elsewhere (logout in another tab, expiry); back to the login form.
    setUnauthorizedHandler(() => {
      setCsrfToken(undefined);
      queryClient.clear();
      setState({ status: 'anonymous', authEnabled: true, expired: true });
    });
    return () => setUnauthorizedHandler(undefined);
  }, [load, queryClient]);

  const value = useMemo<SessionApi>(
    () => ({
      state,
      async login(username, password) {
        const a = await api.post<LoginAnswer>('/session/login', { username, password });
        setCsrfToken(a.csrf_token);
        setState({ status: 'authenticated', user: a.user, expiresAt: a.expires_at, authEnabled: true });
      },
      async logout() {
        await api.post('/session/logout').catch(() => undefined);
        setCsrfToken(undefined);
        queryClient.clear();
        setState({ status: 'anonymous', authEnabled: true, expired: false });
      },
    }),
    [state, queryClient],
  );
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}

export function useSession(): SessionApi {
  const s = useContext(SessionContext);
  if (!s) throw new Error('useSession outside SessionProvider');
  return s;
}
