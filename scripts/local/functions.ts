import { join } from "node:path";

export const ROOT = join(import.meta.dirname, "../..");
export const FUNCTIONS_DIR = join(ROOT, "functions");
export const DIST_DIR = join(ROOT, "dist");
