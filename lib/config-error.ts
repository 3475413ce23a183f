/** A setting is missing, malformed or unusable: the server does not start, and says which key. */
export class ConfigError extends Error {
  override name = "ConfigError";
}
