-- ============================================================================
-- The device that signed a capture (issue 27). In live mode a capture counts
-- only signed by a passkey of the person (docs/devices.md); the sink records
-- which device signed and what binding it gave the capture, so a receipt, a
-- mandate's grant and an audit can say it later. Rows recorded before devices
-- have neither (null); a sandbox capture no device signed is 'none'.
-- ============================================================================

alter table private.captures
  add column device_id uuid references private.device_credentials (id),
  add column device_binding text check (device_binding in ('hardware', 'synced', 'none')),
  add constraint captures_device_signed check (device_id is null or device_binding in ('hardware', 'synced'));

comment on column private.captures.device_id is
  'The passkey (private.device_credentials) whose assertion signed this capture; null when none did (sandbox, a mandate''s stand-in, rows before devices).';
comment on column private.captures.device_binding is
  'What signed the capture at the act: hardware (an attested device-bound key), synced (a passkey the platform may copy), none (no device: sandbox only). Null on a mandate''s stand-in and on rows before devices.';
