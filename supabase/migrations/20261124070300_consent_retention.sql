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

-- consent_retention_sweep({now, limit?}) -> {expired, erased, captures, templates, documents_deleted}
-- One pass: (1) consents whose retention ran out get their consent_expired entry; (2) every ended consent
-- not yet erased (ran out or withdrawn) has what it covered erased and a data_erased entry saying what;
-- (3) disclosed documents past their token's expiry are deleted. At most `limit` (default 500) consents
-- per step; rows are claimed with skip locked so overlapping passes never do the same work twice.
create or replace function public.consent_retention_sweep(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_now timestamptz := (p ->> 'now')::timestamptz;
  v_limit int := least(greatest(coalesce((p ->> 'limit')::int, 500), 1), 5000);
  v_grant record;
  v_expired int := 0;
  v_erased int := 0;
  v_captures int;
  v_captures_total int := 0;
  v_templates int := 0;
  v_documents int;
  v_sessions int;
  v_last boolean;
  v_template_erased boolean;
  v_disclosed int;
  v_disclosed_expired int;
begin
  for v_grant in
    select g.id, g.identity_id, g.merchant_id, (g.payload ->> 'retention_days')::int as retention_days
    from private.consent_ledger g
    where g.kind = 'consent_granted'
      and g.recorded_at + make_interval(days => (g.payload ->> 'retention_days')::int) <= v_now
      and not exists (select 1 from private.consent_ledger e where e.refers_to = g.id and e.kind in ('consent_withdrawn', 'consent_expired'))
    order by g.recorded_at
    limit v_limit
    for update of g skip locked
  loop
    perform 1 from private.consent_chain_heads where identity_id = v_grant.identity_id for update;
    -- a withdrawal may have ended it while this pass waited for the head
    continue when exists (select 1 from private.consent_ledger e where e.refers_to = v_grant.id
                          and e.kind in ('consent_withdrawn', 'consent_expired'));
    insert into private.consent_ledger (identity_id, kind, merchant_id, refers_to, payload, recorded_at)
    values (v_grant.identity_id, 'consent_expired', v_grant.merchant_id, v_grant.id,
            jsonb_build_object('retention_days', v_grant.retention_days), v_now);
    v_expired := v_expired + 1;
  end loop;

  for v_grant in
    select g.id, g.identity_id, g.merchant_id, e.recorded_at as ended_at
    from private.consent_ledger g
    join private.consent_ledger e on e.refers_to = g.id and e.kind in ('consent_withdrawn', 'consent_expired')
    where g.kind = 'consent_granted'
      and not exists (select 1 from private.consent_ledger x where x.refers_to = g.id and x.kind = 'data_erased')
    order by e.recorded_at
    limit v_limit
    for update of g skip locked
  loop
    perform 1 from private.consent_chain_heads where identity_id = v_grant.identity_id for update;
    continue when exists (select 1 from private.consent_ledger x where x.refers_to = v_grant.id and x.kind = 'data_erased');
    -- A consent of the same person with the same merchant that still stands covers their captures too.
    if private.consent_state(v_grant.identity_id, v_grant.merchant_id) = 'active' then
      v_captures := 0;
      v_disclosed := 0;
      v_sessions := 0;
    else
      update private.captures
      set face_similarity = null, amount_minor = null, currency = null, liveness_reason = null, personal_data_erased_at = v_now
      where identity_id = v_grant.identity_id and merchant_id = v_grant.merchant_id and personal_data_erased_at is null;
      get diagnostics v_captures = row_count;
      delete from private.disclosed_documents d using private.consent_ledger l
      where l.id = d.disclosure_id and l.identity_id = v_grant.identity_id and l.merchant_id = v_grant.merchant_id;
      get diagnostics v_disclosed = row_count;
      update private.sessions set revoked_at = v_now
      where identity_id = v_grant.identity_id and merchant_id = v_grant.merchant_id and revoked_at is null;
      get diagnostics v_sessions = row_count;
    end if;
    v_last := not exists (select 1 from private.consents c where c.identity_id = v_grant.identity_id and c.revoked_at is null);
    v_documents := 0;
    v_template_erased := false;
    if v_last then
      delete from private.face_templates where identity_id = v_grant.identity_id;
      v_template_erased := found;
      if v_template_erased then
        v_templates := v_templates + 1;
      end if;
      delete from private.identity_documents where identity_id = v_grant.identity_id;
      get diagnostics v_documents = row_count;
      update private.identities set baseline = null, erased_at = coalesce(erased_at, v_now) where id = v_grant.identity_id;
    end if;
    insert into private.consent_ledger (identity_id, kind, merchant_id, refers_to, payload, recorded_at)
    values (v_grant.identity_id, 'data_erased', v_grant.merchant_id, v_grant.id,
            jsonb_build_object('captures', v_captures, 'disclosed_documents', v_disclosed, 'sessions', v_sessions,
                               'template', v_template_erased, 'identity_documents', v_documents), v_now);
    v_erased := v_erased + 1;
    v_captures_total := v_captures_total + v_captures;
  end loop;

  delete from private.disclosed_documents where expires_at <= v_now;
  get diagnostics v_disclosed_expired = row_count;

  return jsonb_build_object('expired', v_expired, 'erased', v_erased, 'captures', v_captures_total, 'templates', v_templates,
                            'disclosed_documents_expired', v_disclosed_expired);
end $$;
comment on function public.consent_retention_sweep(jsonb) is 'consent-retention cron: ends consents whose retention ran out and erases what every ended consent covered.';
