-- Owner rows of stored Responses (kind `response`, one per response a virtual key creates) are deleted once the
-- provider no longer keeps the response (OpenAI and Azure keep stored responses 30 days): without it the table
-- grows by a row per Responses request for ever. The retention round deletes by kind and age through this index.
CREATE INDEX resource_owners_kind_created_at_idx ON resource_owners (kind, created_at);
