/**
 * The operator CLI: `npm run --silent cli -- <group> <command> [--flag value] --json`.
 * Prints exactly one JSON document on stdout; errors go to stderr with a non-zero exit.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { type CommandGroup, parseArgs, usage } from "./cli/args";

const groupsDir = join(import.meta.dirname, "cli");
const groups = readdirSync(groupsDir)
  .filter((file) => file.endsWith(".ts") && file !== "args.ts")
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

try {
  const result = await main(process.argv.slice(2));
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
} catch (error) {
  process.stderr.write(`error: ${(error as Error).message}\n`);
  process.exitCode = (error as { exitCode?: number }).exitCode ?? 1;
}
