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
