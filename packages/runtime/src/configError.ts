/**
 * A setting missing, malformed, or inconsistent with another, or credentials a server refused: the
 * message names the setting. Its own module so that the NATS connection, which the settings
 * module reads defaults from, can throw it too.
 */
export class ConfigError extends Error {
  override name = 'ConfigError';
}
