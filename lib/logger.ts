/** A small leveled logger writing one JSON line per event to stderr. */
export type LogLevel = "debug" | "info" | "warn" | "error" | "silent";
const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

export function createLogger(level: LogLevel): Logger {
  const threshold = ORDER[level];
  const write = (lvl: Exclude<LogLevel, "silent">) => (message: string, fields?: Record<string, unknown>) => {
    if (ORDER[lvl] < threshold) return;
    const line: Record<string, unknown> = { time: new Date().toISOString(), level: lvl, msg: message, ...fields };
    if (fields?.err instanceof Error) line.err = { name: fields.err.name, message: fields.err.message, stack: fields.err.stack };
    process.stderr.write(JSON.stringify(line) + "\n");
  };
  return { debug: write("debug"), info: write("info"), warn: write("warn"), error: write("error") };
}
