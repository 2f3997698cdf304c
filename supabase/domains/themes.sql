-- ============================================================================
-- Merchant themes of the hosted screens: draft, publish, read.
-- Functions and triggers only, each defined once (create or replace); the
-- tables they use are in supabase/migrations. Applied after the migrations by
-- scripts/local/migrations.ts, which drops any function no domain file defines.
-- ============================================================================

-- theme_tokens(row) -> the row's tokens of its surface as jsonb (NULL tokens stay JSON null)
create or replace function private.theme_tokens(t private.themes) returns jsonb
language sql stable set search_path = '' as $$
  select to_jsonb(t)
    - array['merchant_id', 'surface', 'stage', 'version', 'updated_at']
    - case when t.surface = 'mandate' then array['logo_icon_url', 'color_success', 'color_danger'] else array[]::text[] end
$$;
comment on function private.theme_tokens(private.themes) is 'The tokens of a theme row for its surface (22 capture, 19 mandate), as jsonb.';

-- theme_store(row) -> the stored row: inserts it, or overwrites the tokens of the row of the same
-- merchant, surface and stage, counting its version up.
create or replace function private.theme_store(p_row private.themes) returns private.themes
language plpgsql set search_path = '' as $$
declare
  v_row private.themes;
begin
  insert into private.themes as t select p_row.*
  on conflict (merchant_id, surface, stage) do update set
    (brand_name, mode, logo_wide_url, logo_square_url, logo_icon_url,
     color_primary, color_primary_fg, color_background, color_foreground, color_muted, color_border,
     color_success, color_danger, radius_sm_px, radius_md_px, radius_lg_px, font_heading_family,
     font_body_family, font_heading_url, font_body_url, font_heading_weight, font_body_weight)
    = (excluded.brand_name, excluded.mode, excluded.logo_wide_url, excluded.logo_square_url, excluded.logo_icon_url,
     excluded.color_primary, excluded.color_primary_fg, excluded.color_background, excluded.color_foreground,
     excluded.color_muted, excluded.color_border, excluded.color_success, excluded.color_danger,
     excluded.radius_sm_px, excluded.radius_md_px, excluded.radius_lg_px, excluded.font_heading_family,
     excluded.font_body_family, excluded.font_heading_url, excluded.font_body_url,
     excluded.font_heading_weight, excluded.font_body_weight),
    version = t.version + 1,
    updated_at = now()
  returning * into v_row;
  return v_row;
end $$;
comment on function private.theme_store(private.themes) is 'Upserts one theme row (draft or published) by merchant, surface and stage.';

-- theme_result(row) -> {merchant_id, surface, stage, version, updated_at, theme}
create or replace function private.theme_result(t private.themes) returns jsonb
language sql stable set search_path = '' as $$
  select jsonb_build_object('merchant_id', t.merchant_id, 'surface', t.surface, 'stage', t.stage,
    'version', t.version, 'updated_at', t.updated_at, 'theme', private.theme_tokens(t))
$$;
comment on function private.theme_result(private.themes) is 'What theme_set and theme_publish answer.';

-- ----------------------------------------------------------------------------
-- RPCs
-- ----------------------------------------------------------------------------

-- theme_set({merchant_id, surface, theme: {token: value}}) -> {merchant_id, surface, stage, version, theme}
-- Writes the draft; capture-only tokens are dropped on the mandate surface. Unknown merchant: HA404.
create or replace function public.theme_set(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_merchant_id uuid := (p ->> 'merchant_id')::uuid;
  v_surface text := p ->> 'surface';
  v_new private.themes;
begin
  if not exists (select 1 from private.merchants where id = v_merchant_id) then
    raise exception 'unknown merchant' using errcode = 'HA404', detail = '{"missing":"merchant"}';
  end if;
  v_new := jsonb_populate_record(null::private.themes, coalesce(p -> 'theme', '{}'::jsonb)
    || jsonb_build_object('merchant_id', v_merchant_id, 'surface', v_surface, 'stage', 'draft', 'version', 1, 'updated_at', now()));
  if v_surface = 'mandate' then
    v_new.logo_icon_url := null;
    v_new.color_success := null;
    v_new.color_danger := null;
  end if;
  return private.theme_result(private.theme_store(v_new));
end $$;
comment on function public.theme_set(jsonb) is 'Writes the draft theme of a merchant and surface (never served until published).';

-- theme_publish({merchant_id, surface}) -> {merchant_id, surface, stage, version, theme}
-- Copies the draft over the published row under the draft's row lock. No draft (or merchant): HA404.
create or replace function public.theme_publish(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_draft private.themes;
begin
  select * into v_draft from private.themes
  where merchant_id = (p ->> 'merchant_id')::uuid and surface = p ->> 'surface' and stage = 'draft'
  for update;
  if not found then
    if not exists (select 1 from private.merchants where id = (p ->> 'merchant_id')::uuid) then
      raise exception 'unknown merchant' using errcode = 'HA404', detail = '{"missing":"merchant"}';
    end if;
    raise exception 'no draft theme' using errcode = 'HA404', detail = '{"missing":"draft"}';
  end if;
  v_draft.stage := 'published';
  v_draft.version := 1;
  v_draft.updated_at := now();
  return private.theme_result(private.theme_store(v_draft));
end $$;
comment on function public.theme_publish(jsonb) is 'Publishes the draft theme of a merchant and surface; the served theme changes at once.';

-- theme_get({merchant_id, surface}) -> {token: value} of the published theme | null
create or replace function public.theme_get(p jsonb) returns jsonb
language sql stable security definer set search_path = '' as $$
  select private.theme_tokens(t)
  from private.themes t
  where t.merchant_id = (p ->> 'merchant_id')::uuid
    and t.surface = p ->> 'surface'
    and t.stage = 'published'
$$;
comment on function public.theme_get(jsonb) is 'The published tokens of a merchant and surface (NULL tokens included), or null when nothing is published.';

-- theme_asset_get({id: uuid}) -> {content_type, family, content_base64} | null: an uploaded asset as
-- the service serves it to anyone (the hosted screen loads it with no key; its URL is unguessable).
create or replace function public.theme_asset_get(p jsonb) returns jsonb
language sql stable security definer set search_path = '' as $$
  select jsonb_build_object('content_type', a.content_type, 'family', a.family, 'content_base64', encode(a.content, 'base64'))
  from private.theme_assets a
  where a.id = (p ->> 'id')::uuid
$$;
comment on function public.theme_asset_get(jsonb) is 'An uploaded theme asset''s type, family and content, by id, or null.';
