-- ============================================================================
-- Theme assets (issue 30; docs/decisions.md, D-526): a merchant's logos and fonts,
-- uploaded through /v1/theme_assets, stored by the service and served from its
-- own origin under an immutable URL. A theme's URL tokens may name one by id
-- (ta_ + 32 hex) instead of a URL: the served theme resolves it to the
-- service's URL, so the hosted screen loads nothing from another host.
-- ============================================================================

create table private.theme_assets (
  id uuid primary key,
  merchant_id uuid not null references private.merchants (id),
  kind text not null check (kind in ('logo', 'font')),
  content_type text not null check (content_type in ('image/png', 'image/jpeg', 'image/webp', 'image/svg+xml', 'font/woff2', 'font/woff')),
  family text check (family is null or family ~ '^[A-Za-z0-9 ._-]{1,64}$'),
  content bytea not null,
  byte_size integer not null check (byte_size between 1 and 163840),
  sha256 text not null check (sha256 ~ '^[0-9a-f]{64}$'),
  created_at timestamptz not null,
  created_by text not null check (length(created_by) between 1 and 100),
  check ((kind = 'font') = (family is not null)),
  check ((kind = 'font') = (content_type in ('font/woff2', 'font/woff'))),
  check (octet_length(content) = byte_size)
);
comment on table private.theme_assets is 'Logos and fonts a merchant uploaded for its themes; immutable (served with a year-long cache), never hot-linked.';
comment on column private.theme_assets.id is 'The asset''s id (answered as ta_ + 32 hex, and the last part of its URL).';
comment on column private.theme_assets.merchant_id is 'The merchant whose themes may use it (themes are the merchant''s, both environments).';
comment on column private.theme_assets.kind is 'logo (for the logo_* tokens) or font (for the font_*_url tokens).';
comment on column private.theme_assets.content_type is 'The type its bytes were found to be (by their signature, not the caller''s word).';
comment on column private.theme_assets.family is 'A font''s family name, as its stylesheet declares it; null for a logo.';
comment on column private.theme_assets.content is 'The file as served (an SVG only after it passed the sanitiser''s allow-list).';
comment on column private.theme_assets.byte_size is 'Its size in bytes (logos at most 128 KiB, fonts at most 160 KiB).';
comment on column private.theme_assets.sha256 is 'The SHA-256 of content, hex.';
comment on column private.theme_assets.created_at is 'When it was uploaded.';
comment on column private.theme_assets.created_by is 'Who uploaded it: the key''s id (key_…) or the owner''s subject_ref.';
create index theme_assets_merchant_idx on private.theme_assets (merchant_id, created_at desc);

-- A theme's URL token: an https URL (the operator's theme files), or an uploaded asset by id.
create domain private.theme_url as text
  check (value ~ '^ta_[0-9a-f]{32}$' or (length(value) <= 2048 and value ~ '^https://[^[:space:]/?#]+([/?#][^[:space:]]*)?$'));
comment on domain private.theme_url is 'A theme URL token: an absolute https:// URL of at most 2048 characters, or an uploaded theme asset''s id (ta_ + 32 hex).';

alter table private.themes
  alter column logo_wide_url type private.theme_url,
  alter column logo_square_url type private.theme_url,
  alter column logo_icon_url type private.theme_url,
  alter column font_heading_url type private.theme_url,
  alter column font_body_url type private.theme_url;
