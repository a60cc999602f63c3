-- The reference management API's fields (issue 14): a customer's contact email, the customer a team belongs to,
-- a routing rule's visual rule tree (the dashboard's query builder state, stored as given), and the outbound
-- proxy for upstream provider calls (one row with the client settings; the password sealed like key secrets).
ALTER TABLE customers ADD COLUMN email text;

ALTER TABLE teams ADD COLUMN customer_id text REFERENCES customers(id);
CREATE INDEX teams_customer_id ON teams (customer_id) WHERE customer_id IS NOT NULL;

ALTER TABLE routing_rules ADD COLUMN query jsonb;

-- {enabled, type, url, username, no_proxy, timeout, skip_tls_verify, ...}; `secret` holds the sealed password.
ALTER TABLE client_config
  ADD COLUMN proxy_config jsonb,
  ADD COLUMN proxy_secret text;
