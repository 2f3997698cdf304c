/**
 * The CLI's one entry: parses the command line, runs the command and renders what the process
 * prints (one JSON document on stdout, or `error: …` on stderr) and its exit status. scripts/cli.ts
 * runs it as a process; the tests call it in-process with the environment they choose, so each
 * command costs a database round trip rather than a fresh tsx process.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { type CliContext, type CommandGroup, cliContext, parseArgs, usage } from "./args";

const groupsDir = import.meta.dirname;
const groups = readdirSync(groupsDir)
  .filter((file) => file.endsWith(".ts") && file !== "args.ts" && file !== "run.ts")
  .map((file) => file.slice(0, -3))
  .sort();

async function main(argv: string[]): Promise<unknown> {
  const [group, command, ...rest] = argv;
  if (!group || !groups.includes(group)) throw usage(`unknown command group ${group ?? "(none)"}; groups: ${groups.join(", ")}`);
  const commands = (await import(join(groupsDir, `${group}.ts`))).default as CommandGroup;
  // A group that is itself a command (`usage --merchant M`) names it "" and takes every argument.
  const bare = commands[""];
  if (bare && (command === undefined || command.startsWith("--"))) return bare(parseArgs(argv.slice(1)));
  // A command of two words (`merchant owner add`) is named by both; any other word after the command
  // stays an argument, so `merchant create Acme` is refused as a stray argument, not an unknown command.
  const twoWords = `${command} ${rest[0]}`;
  const opensTwoWords = !(command in commands) && Object.keys(commands).some((known) => known.startsWith(`${command} `));
  const [name, args] = rest[0] && (twoWords in commands || opensTwoWords) ? [twoWords, rest.slice(1)] : [command, rest];
  const run = name ? commands[name] : undefined;
  if (!run) throw usage(`unknown command "${group} ${name ?? ""}"; commands: ${Object.keys(commands).join(", ")}`);
  return run(parseArgs(args));
}

/** What one CLI run printed and its exit status. */
export interface CliOutcome {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs one command line with `env` as its environment. `stderr` receives progress lines as they
 * happen (`webhook listen`); they are also part of the outcome.
 *
 * @example const { code, stdout } = await runCli(["merchant", "create", "--name", "A", "--json"], process.env);
 */
export async function runCli(
  argv: string[],
  env: Record<string, string | undefined>,
  stderr: (text: string) => void = () => {},
): Promise<CliOutcome> {
  let printed = "";
  const context: CliContext = {
    env,
    exitCode: 0,
    stderr: (text) => {
      printed += text;
      stderr(text);
    },
  };
  return cliContext.run(context, async () => {
    try {
      const result = await main(argv);
      return { code: context.exitCode, stdout: `${JSON.stringify(result, null, 2)}\n`, stderr: printed };
    } catch (error) {
      context.stderr(`error: ${(error as Error).message}\n`);
      return { code: (error as { exitCode?: number }).exitCode ?? 1, stdout: "", stderr: printed };
    }
  });
}
