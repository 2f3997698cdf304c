-- ============================================================================
-- Themes (spec 2.9, 4.16): per merchant and surface, a draft written by the
-- CLI (`theme set`) and a published version that merchant-theme-get serves.
-- Token columns are typed by the domains below; NULL is allowed in the table
-- (spec rule 1: a published row with any NULL token is served as the default
-- theme, never merged). shared/themes/theme.ts validates the same rules in TypeScript.
-- ============================================================================


-- ----------------------------------------------------------------------------
-- Token domains
-- ----------------------------------------------------------------------------
create domain private.hsl_triple as text
  check (
    value is null or case
      when value ~ '^[0-9]{1,3}(\.[0-9]{1,2})? [0-9]{1,3}(\.[0-9]{1,2})?% [0-9]{1,3}(\.[0-9]{1,2})?%$' then
        split_part(value, ' ', 1)::numeric <= 360
        and rtrim(split_part(value, ' ', 2), '%')::numeric <= 100
        and rtrim(split_part(value, ' ', 3), '%')::numeric <= 100
      else false
    end
  );
comment on domain private.hsl_triple is 'A colour as an "H S% L%" triple: hue 0-360, saturation and lightness 0-100%, at most two decimals each.';

create domain private.https_url as text
  check (length(value) <= 2048 and value ~ '^https://[^[:space:]/?#]+([/?#][^[:space:]]*)?$');
comment on domain private.https_url is 'An absolute https:// URL of at most 2048 characters.';

create domain private.theme_radius_px as smallint check (value between 0 and 64);
comment on domain private.theme_radius_px is 'A corner radius in CSS pixels, 0 to 64.';

create domain private.font_weight as smallint check (value between 100 and 900);
comment on domain private.font_weight is 'A CSS font weight, 100 to 900.';

create domain private.theme_mode as text check (value in ('light', 'dark'));
comment on domain private.theme_mode is 'light or dark.';

create domain private.font_family as text
  check (value ~ '^[A-Za-z0-9 ,''"._-]{1,200}$' and value ~ '[A-Za-z]');
comment on domain private.font_family is 'A CSS font-family list; a closed character set so it can never break out of a stylesheet.';

create domain private.brand_name as text
  check (length(value) between 1 and 80 and value = btrim(value) and value !~ '[[:cntrl:]]');
comment on domain private.brand_name is 'The name shown on the hosted screens: 1 to 80 characters, no control characters, no surrounding spaces.';


-- ----------------------------------------------------------------------------
-- Themes
-- ----------------------------------------------------------------------------
create table private.themes (
  merchant_id uuid not null references private.merchants (id),
  surface text not null check (surface in ('capture', 'mandate')),
  stage text not null check (stage in ('draft', 'published')),
  version integer not null default 1 check (version > 0),
  updated_at timestamptz not null default now(),
  brand_name private.brand_name,
  mode private.theme_mode,
  logo_wide_url private.https_url,
  logo_square_url private.https_url,
  logo_icon_url private.https_url,
  color_primary private.hsl_triple,
  color_primary_fg private.hsl_triple,
  color_background private.hsl_triple,
  color_foreground private.hsl_triple,
  color_muted private.hsl_triple,
  color_border private.hsl_triple,
  color_success private.hsl_triple,
  color_danger private.hsl_triple,
  radius_sm_px private.theme_radius_px,
  radius_md_px private.theme_radius_px,
  radius_lg_px private.theme_radius_px,
  font_heading_family private.font_family,
  font_body_family private.font_family,
  font_heading_url private.https_url,
  font_body_url private.https_url,
  font_heading_weight private.font_weight,
  font_body_weight private.font_weight,
  primary key (merchant_id, surface, stage),
  constraint themes_mandate_tokens check (
    surface = 'capture' or (logo_icon_url is null and color_success is null and color_danger is null)
  )
);
comment on table private.themes is 'Merchant themes: per merchant and surface one draft (written by the CLI) and one published row (served). Tokens may be NULL; a published row with any NULL token of its surface is served as the default theme.';
comment on column private.themes.merchant_id is 'The merchant whose screens the theme brands.';
comment on column private.themes.surface is 'capture (22 tokens) or mandate (19 tokens: no logo_icon_url, color_success, color_danger).';
comment on column private.themes.stage is 'draft (written by theme set, never served) or published (copied from the draft by theme publish, served).';
comment on column private.themes.version is 'How many times this row was written: for the published row, the publication number.';
comment on column private.themes.updated_at is 'When this row was last written.';
comment on column private.themes.brand_name is 'Token brand_name: the merchant name shown on the screens.';
comment on column private.themes.mode is 'Token mode: light or dark.';
comment on column private.themes.logo_wide_url is 'Token logo_wide_url: wide logo image.';
comment on column private.themes.logo_square_url is 'Token logo_square_url: square logo image.';
comment on column private.themes.logo_icon_url is 'Token logo_icon_url (capture only): small icon image.';
comment on column private.themes.color_primary is 'Token color_primary: primary colour (buttons, accents).';
comment on column private.themes.color_primary_fg is 'Token color_primary_fg: text on the primary colour.';
comment on column private.themes.color_background is 'Token color_background: page background.';
comment on column private.themes.color_foreground is 'Token color_foreground: body text.';
comment on column private.themes.color_muted is 'Token color_muted: secondary text.';
comment on column private.themes.color_border is 'Token color_border: borders and dividers.';
comment on column private.themes.color_success is 'Token color_success (capture only): success states.';
comment on column private.themes.color_danger is 'Token color_danger (capture only): error states.';
comment on column private.themes.radius_sm_px is 'Token radius_sm_px: small corner radius.';
comment on column private.themes.radius_md_px is 'Token radius_md_px: medium corner radius.';
comment on column private.themes.radius_lg_px is 'Token radius_lg_px: large corner radius.';
comment on column private.themes.font_heading_family is 'Token font_heading_family: CSS font-family list for headings.';
comment on column private.themes.font_body_family is 'Token font_body_family: CSS font-family list for body text.';
comment on column private.themes.font_heading_url is 'Token font_heading_url: stylesheet that loads the heading font.';
comment on column private.themes.font_body_url is 'Token font_body_url: stylesheet that loads the body font.';
comment on column private.themes.font_heading_weight is 'Token font_heading_weight: heading font weight.';
comment on column private.themes.font_body_weight is 'Token font_body_weight: body font weight.';

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
