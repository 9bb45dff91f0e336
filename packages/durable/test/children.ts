/** Running child processes from tests: `node --conditions=@tickwork/source --import tsx file`. */
import { type ChildProcess, spawn } from "node:child_process"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"

/** The repository's root (tsx resolves from there). */
export const repoRoot = fileURLToPath(new URL("../../../", import.meta.url))

/** Node arguments that run a workspace TypeScript file from source. */
export const tsxArgs = ["--conditions=@tickwork/source", "--import", "tsx"]

/** A fixture's path. */
export const fixture = (name: string): string =>
  fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url))

/** A child running a fixture, with each stdout line passed to `onLine`. */
export const child = (
  name: string,
  args: ReadonlyArray<string>,
  onLine: (line: string) => void,
  env: Record<string, string> = {},
): { readonly process: ChildProcess; readonly exited: Promise<number | null> } => {
  const p = spawn(process.execPath, [...tsxArgs, fixture(name), ...args], {
    cwd: repoRoot,
    stdio: ["ignore", "pipe", "inherit"],
    env: { ...process.env, ...env },
  })
  createInterface({ input: p.stdout as NonNullable<typeof p.stdout> }).on("line", onLine)
  const exited = new Promise<number | null>((resolve) => p.once("exit", (code) => resolve(code)))
  return { process: p, exited }
}
