import { readFile } from "node:fs/promises";
import { rpc } from "../../shared/kernel/db/rpc";
import { UUID } from "../../shared/lib/uuid";
import { resolveTheme, surfaces, themeAssetBases, validateTheme } from "../../shared/themes/theme";
import { type CommandGroup, choiceFlag, cliEnv, type Flags, requireFlag, usage, withDatabase } from "./args";

const theme: CommandGroup = {
  /**
   * theme set --merchant M --surface capture|mandate --file F: validates the JSON file (every token
   * of the surface, nothing else) and writes it as the draft. Nothing is served until `theme publish`.
   */
  async set(flags) {
    const { merchantId, surface } = target(flags);
    const file = requireFlag(flags, "file");
    let data: unknown;
    try {
      data = JSON.parse(await readFile(file, "utf8"));
    } catch (error) {
      throw new Error(`cannot read ${file} as JSON: ${(error as Error).message}`);
    }
    const checked = validateTheme(surface, data);
    if (!checked.ok) throw new Error(`${file} is not a valid ${surface} theme:\n  ${checked.problems.join("\n  ")}`);
    return withDatabase((sql) => rpc(sql, "theme_set", { merchant_id: merchantId, surface, theme: checked.theme })).catch(missing);
  },

  /** theme publish --merchant M --surface capture|mandate: the draft becomes the served theme at once. */
  async publish(flags) {
    const { merchantId, surface } = target(flags);
    return withDatabase((sql) => rpc(sql, "theme_publish", { merchant_id: merchantId, surface })).catch(missing);
  },

  /** theme show --merchant M --surface capture|mandate: the published row as stored and what merchant-theme-get serves. */
  async show(flags) {
    const { merchantId, surface } = target(flags);
    const published = await withDatabase((sql) => rpc(sql, "theme_get", { merchant_id: merchantId, surface }));
    // The service serves the default assets itself: PUBLIC_BASE_URL, or the local `npm start`.
    const env = cliEnv();
    const serviceBaseUrl = env.PUBLIC_BASE_URL ?? `http://127.0.0.1:${env.PORT ?? 8787}`;
    const bases = themeAssetBases(env.THEME_ASSETS_BASE_URL, serviceBaseUrl);
    const served = resolveTheme(surface, published, bases.assets, bases.uploads);
    return { merchant_id: merchantId, surface, published, served: { customized: served.customized, theme: served.theme } };
  },
};

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
