/**
 * What docs/functions.md says each function can answer, read from its tables: per `## <name>`
 * section, the rows of the table headed `| status | code |` (an empty code cell for answers
 * without one), the `format_code` values of a `| format_code |` table; the section `## Every
 * function` adds its rows to every function, and `## Refusal reasons` lists the `reason` values of
 * mandate decisions. The resource API's errors are the `| code | status |` table of
 * docs/resource-api.md, where that surface keeps them.
 */
import { readFileSync } from "node:fs";

interface DocumentedFunction {
  /** `"<status> <code>"`, or `"<status> "` for an answer without a code. */
  answers: Set<string>;
  formatCodes: Set<string>;
}

export interface DocumentedAnswers {
  functions: Map<string, DocumentedFunction>;
  /** Every refusal `reason` of a mandate decision. */
  refusalReasons: Set<string>;
}

export const EVERY_FUNCTION = "Every function";
const REFUSAL_REASONS = "Refusal reasons";

const cells = (line: string) =>
  line
    .trim()
    .replace(/^\||\|$/g, "")
    .split("|")
    .map((cell) => cell.trim());
const names = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((match) => match[1]);

/** Reads docs/functions.md and docs/resource-api.md. */
export function documentedAnswers(path = "docs/functions.md", resourceApiPath = "docs/resource-api.md"): DocumentedAnswers {
  const functions = new Map<string, DocumentedFunction>();
  const refusalReasons = new Set<string>();
  let section: DocumentedFunction | null = null;
  let sectionName = "";
  let table: "answers" | "format_code" | "reason" | null = null;
  for (const line of readFileSync(path, "utf8").split("\n")) {
    const heading = /^## (.+)$/.exec(line);
    if (heading) {
      sectionName = heading[1].replace(/`/g, "").trim();
      section = { answers: new Set(), formatCodes: new Set() };
      functions.set(sectionName, section);
      table = null;
      continue;
    }
    if (!line.startsWith("|")) {
      table = null;
      continue;
    }
    const row = cells(line);
    if (/^-+$/.test(row[0].replace(/:/g, ""))) continue;
    if (table === null) {
      table =
        row[0] === "status" && row[1] === "code"
          ? "answers"
          : row[0] === "format_code"
            ? "format_code"
            : row[0] === "reason"
              ? "reason"
              : null;
      continue;
    }
    if (!section) continue;
    if (table === "answers") {
      const status = Number(row[0]);
      if (!Number.isInteger(status)) throw new Error(`docs: "${row[0]}" is not a status in section ${sectionName}`);
      const codes = names(row[1]);
      for (const code of codes.length ? codes : [""]) section.answers.add(`${status} ${code}`);
    } else if (table === "format_code") {
      for (const code of names(row[0])) section.formatCodes.add(code);
    } else if (table === "reason" && sectionName === REFUSAL_REASONS) {
      for (const reason of names(row[0])) refusalReasons.add(reason);
    }
  }
  const resourceApi = functions.get("resource-api");
  if (resourceApi) for (const answer of resourceApiErrors(resourceApiPath)) resourceApi.answers.add(answer);
  return { functions, refusalReasons };
}

/** The rows of the `| code | status |` table: several codes in a row take its statuses in order, or its one status. */
function resourceApiErrors(path: string): string[] {
  const answers: string[] = [];
  let inTable = false;
  for (const line of readFileSync(path, "utf8").split("\n")) {
    const row = line.trim().startsWith("|") ? cells(line) : null;
    if (!row) {
      inTable = false;
      continue;
    }
    if (row[0] === "code" && row[1] === "status") {
      inTable = true;
      continue;
    }
    if (!inTable || /^-+$/.test(row[0])) continue;
    const codes = names(row[0]);
    const statuses = row[1].split(",").map((status) => Number(status.trim()));
    for (const [index, code] of codes.entries())
      answers.push(`${statuses.length === codes.length ? statuses[index] : statuses[0]} ${code}`);
  }
  return answers;
}
