/**
 * The operator CLI: `npm run --silent cli -- <group> <command> [--flag value] --json`.
 * Prints exactly one JSON document on stdout; errors go to stderr with a non-zero exit.
 */
import { runCli } from "./cli/run";

const outcome = await runCli(process.argv.slice(2), process.env, (text) => process.stderr.write(text));
process.stdout.write(outcome.stdout);
process.exitCode = outcome.code;
