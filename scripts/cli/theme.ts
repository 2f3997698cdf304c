import { readFile } from "node:fs/promises";
import { extname } from "node:path";
import { rpc } from "../../shared/kernel/db/rpc";
import { UUID } from "../../shared/lib/uuid";
import { checkTheme } from "../../shared/management/themes";
import { resolveTheme, surfaces, themeAssetBases, validateTheme } from "../../shared/themes/theme";
import { type CommandGroup, choiceFlag, cliEnv, type Flags, managementApi, requireFlag, usage, withDatabase } from "./args";

/**
 * With the merchant's own key (`--api-key` or SERVICE_API_KEY) the theme commands are clients of
 * /v1/themes and /v1/theme_assets (docs/management.md, "Themes"; D-453, D-525): no --merchant, no
 * database. Without one they stay the operator's, on the database.
 */
type Api = NonNullable<ReturnType<typeof managementApi>>;

async function jsonFile(file: string): Promise<unknown> {
  try {
    return JSON.parse(await readFile(file, "utf8"));
  } catch (error) {
    throw new Error(`cannot read ${file} as JSON: ${(error as Error).message}`);
  }
}

const typesByExtension: Record<string, string> = {
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".webp": "image/webp",
  ".svg": "image/svg+xml",
  ".woff2": "font/woff2",
  ".woff": "font/woff",
};

const viaApi = {
  set: async (api: Api, flags: Flags) =>
    api("POST", `/themes/${choiceFlag(flags, "surface", surfaces)}/draft`, { theme: await jsonFile(requireFlag(flags, "file")) }),
  publish: (api: Api, flags: Flags) => api("POST", `/themes/${choiceFlag(flags, "surface", surfaces)}/publish`, {}),
  show: (api: Api, flags: Flags) => api("GET", `/themes/${choiceFlag(flags, "surface", surfaces)}`),
};

const theme: CommandGroup = {
  /**
   * theme set --merchant M --surface capture|mandate --file F: validates the JSON file (every token
   * of the surface, nothing else) and writes it as the draft. Nothing is served until `theme publish`.
   */
  async set(flags) {
    const api = managementApi(flags);
    if (api) return viaApi.set(api, flags);
    const { merchantId, surface } = target(flags);
    const file = requireFlag(flags, "file");
    const data = await jsonFile(file);
    const checked = validateTheme(surface, data);
    if (!checked.ok) throw new Error(`${file} is not a valid ${surface} theme:\n  ${checked.problems.join("\n  ")}`);
    return withDatabase((sql) => rpc(sql, "theme_set", { merchant_id: merchantId, surface, theme: checked.theme })).catch(missing);
  },

  /** theme publish --merchant M --surface capture|mandate: the draft becomes the served theme at once. */
  async publish(flags) {
    const api = managementApi(flags);
    if (api) return viaApi.publish(api, flags);
    const { merchantId, surface } = target(flags);
    return withDatabase(async (sql) => {
      // A draft written through the API may be partial (D-525): only a complete, valid one is served.
      const { draft } = await rpc(sql, "management_themes_get", { merchant_id: merchantId, surface });
      const checked = draft ? checkTheme(surface, draft.theme) : null;
      if (checked && !checked.valid) throw new Error(`the draft ${surface} theme cannot be published:\n  ${checked.problems.join("\n  ")}`);
      return rpc(sql, "theme_publish", { merchant_id: merchantId, surface });
    }).catch(missing);
  },

  /** theme show --merchant M --surface capture|mandate: the published row as stored and what merchant-theme-get serves. */
  async show(flags) {
    const api = managementApi(flags);
    if (api) return viaApi.show(api, flags);
    const { merchantId, surface } = target(flags);
    const published = await withDatabase((sql) => rpc(sql, "theme_get", { merchant_id: merchantId, surface }));
    // The service serves the default assets itself: PUBLIC_BASE_URL, or the local `npm start`.
    const env = cliEnv();
    const serviceBaseUrl = env.PUBLIC_BASE_URL ?? `http://127.0.0.1:${env.PORT ?? 8787}`;
    const bases = themeAssetBases(env.THEME_ASSETS_BASE_URL, serviceBaseUrl);
    const served = resolveTheme(surface, published, bases.assets, bases.uploads);
    return { merchant_id: merchantId, surface, published, served: { customized: served.customized, theme: served.theme } };
  },

  /** theme validate --api-key K --surface S --file F: the service's verdict on a theme file, nothing stored. */
  async validate(flags) {
    return keyed(flags)("POST", `/themes/${choiceFlag(flags, "surface", surfaces)}/validate`, {
      theme: await jsonFile(requireFlag(flags, "file")),
    });
  },

  /** theme preview --api-key K --surface S: the draft as the hosted screen would receive it once published. */
  async preview(flags) {
    return keyed(flags)("GET", `/themes/${choiceFlag(flags, "surface", surfaces)}/preview`);
  },

  /**
   * theme upload --api-key K --file F [--kind logo|font] [--family NAME] [--content-type T]: a logo
   * or a font, its type from the file's extension unless given; its id is what a theme names it by.
   */
  async upload(flags) {
    const api = keyed(flags);
    const file = requireFlag(flags, "file");
    const contentType = typeof flags["content-type"] === "string" ? flags["content-type"] : typesByExtension[extname(file).toLowerCase()];
    if (!contentType) throw usage(`cannot tell the type of ${file}: give --content-type`);
    const kind = choiceFlag(flags, "kind", ["logo", "font"] as const, contentType.startsWith("font/") ? "font" : "logo");
    const data = (await readFile(file)).toString("base64");
    return api("POST", "/theme_assets", {
      kind,
      content_type: contentType,
      data,
      ...(typeof flags.family === "string" ? { family: flags.family } : {}),
    });
  },

  /** theme assets --api-key K: the uploaded logos and fonts, newest first. */
  async assets(flags) {
    return keyed(flags)("GET", "/theme_assets");
  },
};

/** The API client of a command that exists only through the API. */
function keyed(flags: Flags): Api {
  const api = managementApi(flags);
  if (!api) throw usage("this command works through the management API: give --api-key (or SERVICE_API_KEY)");
  return api;
}

function target(flags: Flags) {
  const merchantId = requireFlag(flags, "merchant");
  if (!UUID.test(merchantId)) throw usage("--merchant must be a merchant id");
  return { merchantId: merchantId.toLowerCase(), surface: choiceFlag(flags, "surface", surfaces) };
}

function missing(error: unknown): never {
  const { code, extra } = error as { code?: string; extra?: { missing?: string } };
  if (code === "not_found" && extra?.missing === "draft") throw new Error("no draft theme to publish: run theme set first");
  if (code === "not_found") throw new Error("unknown merchant");
  throw error;
}

export default theme;
