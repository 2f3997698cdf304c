-- Issue 27: a hosted session opened in a popup by a merchant's own page (an SDK integration on the
-- merchant's origin) tells that page how it ended, by postMessage to exactly this origin
-- (docs/decisions.md, D-643). The ceremony itself runs on the service's origin, its relying party.
alter table private.hosted_sessions add column opener_origin text
  check (opener_origin ~ '^https?://[A-Za-z0-9.:\[\]-]+$' and length(opener_origin) <= 300);
comment on column private.hosted_sessions.opener_origin is
  'The origin of the merchant page that opens the screen in a popup (scheme, host, port; no path), named by the merchant''s server at creation: the screen posts the session''s end to it alone. Null: no popup.';
