-- ============================================================================
-- Consent retention: a consent covers the person's biometric data for
-- retention_days from the grant. When that runs out (or the consent is
-- withdrawn) the consent-retention cron ends it in the ledger and erases what
-- it covered: the personal data of the merchant's captures of the person, the
-- documents disclosed under it, the person's sessions with the merchant, and,
-- once no consent of the person stands with any merchant, the protected
-- template, the physiological baseline and the identity documents.
-- ============================================================================

alter table private.captures add column personal_data_erased_at timestamptz;
comment on column private.captures.personal_data_erased_at is 'When the capture''s personal data (face similarity, amount, currency, liveness reason) was erased because the consent covering it ended; the verdicts stay for the receipt.';
