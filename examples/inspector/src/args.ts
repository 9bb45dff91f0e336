// Command-line options of the live view.

/** The value of `--name value` or `--name=value`, else the environment variable `env`. */
export const option = (name: string, env: string): string | undefined => {
  const args = process.argv.slice(2)
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string
    if (arg === `--${name}`) return args[i + 1]
    if (arg.startsWith(`--${name}=`)) return arg.slice(name.length + 3)
  }
  return process.env[env]
}

/** `text` as a number >= 0 (a whole one when `whole`); `undefined` when not given. */
export const number = (
  name: string,
  text: string | undefined,
  whole = false,
): number | undefined => {
  if (text === undefined || text === "") return undefined
  const n = Number(text)
  if (!(whole ? Number.isSafeInteger(n) : Number.isFinite(n)) || n < 0) {
    throw new Error(
      `--${name} must be a ${whole ? "whole " : ""}number >= 0, got ${JSON.stringify(text)}`,
    )
  }
  return n
}
