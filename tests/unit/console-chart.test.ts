/** The console overview's chart summary: what a screen reader hears, in each locale. */
import { describe, expect, it } from "vitest";
import { checksChart, words } from "../../functions/console/views";

const summaryOf = (chart: string) => /aria-label="([^"]*)"/.exec(chart)?.[1];

describe("the console's checks chart", () => {
  it("says each count after its label, so one check reads right in every language", () => {
    const days = [
      { day: "2026-11-26", completed: 0, failed: 0 },
      { day: "2026-11-27", completed: 1, failed: 1 },
    ];
    expect(summaryOf(String(checksChart(words("pt-BR"), days)))).toBe(
      "Verificações nos últimos 30 dias — concluídas: 1; com falha: 1; no dia de mais movimento: 2.",
    );
    expect(summaryOf(String(checksChart(words("en"), days)))).toBe(
      "Checks in the last 30 days: 1 completed, 1 failed; 2 on the busiest day.",
    );
  });

  it("says the busiest day had none when there were no checks (the bars' scale has a floor of one, the words do not)", () => {
    const days = [{ day: "2026-11-27", completed: 0, failed: 0 }];
    expect(summaryOf(String(checksChart(words("es"), days)))).toMatch(/en el día de más actividad: 0\.$/);
  });
});
