/**
 * The hosted screen's JSON endpoints under /functions/v1/hosted-capture (the page and its assets
 * are served beside them by the same function):
 * - `POST /boot` `{session_token}`: exchanges the token as the service (hosted-session-consume's
 *   operation) for what the screen shows, the capture nonce and the screen credential;
 * - `POST /complete` (Authorization: Bearer <screen credential>) with the capture: judges it for
 *   the session's action and answers the outcome;
 * - `POST /cancel` (the same credential) `{reason?}`: the person ends the screen without a capture.
 * Every answer is `cache-control: no-store`.
 */
import type { MiddlewareHandler } from "hono";
import { SCENARIO_HEADER } from "../../shared/identity/scenario";
import { type AppEnv, type createFunctionApp, depsOf } from "../../shared/platform/app";
import { bearerOf } from "../../shared/platform/authenticate";
import { serviceBaseUrl } from "../../shared/platform/config";
import { ApiError } from "../../shared/platform/errors";
import { input } from "../../shared/platform/input";
import { requireSecret, signingKeysOf, templatesOf } from "../../shared/platform/keys";
import { jsonObject } from "../../shared/platform/validation";
import { cancelSchema, cancelSession, completeSession } from "../../shared/sessions/complete";
import { consumeSchema } from "../../shared/sessions/consume";
import { bootScreen } from "../../shared/sessions/screen";
import { isScreenToken } from "../../shared/sessions/tokens";
import { themeAssetsBaseUrl } from "../../shared/themes/theme";

type ScreenAuthenticated = { Variables: { screenToken: string } };

const noStore: MiddlewareHandler<AppEnv> = async function noStore(c, next) {
  await next();
  c.header("cache-control", "no-store");
};

/**
 * The screen credential of `Authorization: Bearer hsc_…`, checked for its form before the body is
 * read (`401 SCREEN_TOKEN_REQUIRED` without one, `401 SCREEN_TOKEN_INVALID` when malformed); the
 * operation's own RPC finds its session.
 */
const screenCredential: MiddlewareHandler<AppEnv & ScreenAuthenticated> = async function screenCredential(c, next) {
  const token = bearerOf(c.req.header("authorization"));
  if (!token) throw new ApiError("SCREEN_TOKEN_REQUIRED");
  if (!isScreenToken(token)) throw new ApiError("SCREEN_TOKEN_INVALID");
  c.set("screenToken", token);
  await next();
};

export function mountScreenApi(app: ReturnType<typeof createFunctionApp>) {
  app.post("/boot", noStore, input("json", consumeSchema), async (c) => {
    const { config } = c.var;
    const assetsBaseUrl = themeAssetsBaseUrl(config.THEME_ASSETS_BASE_URL, serviceBaseUrl(config, c.req.url));
    return c.json(await bootScreen(depsOf(c.var), c.var.input.session_token, assetsBaseUrl));
  });

  app.post("/complete", noStore, screenCredential, input("json", jsonObject), async (c) => {
    const { config } = c.var;
    const keys = {
      templates: await templatesOf(c.var),
      subjectRefSecret: requireSecret(config, "SUBJECT_REF_SECRET"),
      signing: () => signingKeysOf(config),
    };
    return c.json(await completeSession(depsOf(c.var), keys, c.var.screenToken, c.var.input, c.req.header(SCENARIO_HEADER)));
  });

  app.post("/cancel", noStore, screenCredential, input("json", cancelSchema), async (c) => {
    return c.json(await cancelSession(depsOf(c.var), c.var.screenToken, c.var.input));
  });
}
