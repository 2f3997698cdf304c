-- ============================================================================
-- Devices: the WebAuthn user handle the service issued with a registration's
-- options (docs/devices.md, "Registration options"). The hosted screen's boot
-- issues the options of its capture's ceremony; a registration's user handle
-- (user.id) is recorded with the challenge it was issued with, and the
-- credential that registration makes keeps it, so a discoverable credential's
-- assertion (its userHandle) can be held to what the service issued.
-- ============================================================================

alter table private.device_challenges
  add column user_handle text check (user_handle ~ '^[A-Za-z0-9_-]{22,86}$');
comment on column private.device_challenges.user_handle is
  'The user handle (user.id, base64url) of the registration options issued with this challenge; null when none were (an assertion, or options the caller built).';

alter table private.device_credentials
  add column user_handle text check (user_handle ~ '^[A-Za-z0-9_-]{22,86}$');
comment on column private.device_credentials.user_handle is
  'The user handle the service issued for the registration that made this credential (base64url): the credential''s userHandle in every assertion; null for a credential registered without served options.';
