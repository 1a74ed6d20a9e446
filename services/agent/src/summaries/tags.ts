/** Most tags generated per revision (client tags given at creation come on top). */
export const MAX_GENERATED_TAGS = 8;

/** The tags a summary records: trimmed, lower case, 1–100 characters, unique, at most MAX_GENERATED_TAGS. */
export function generatedTags(tags: readonly string[]): string[] {
  return [...new Set(tags.map((t) => t.trim().toLowerCase()).filter((t) => t.length > 0 && t.length <= 100))].slice(0, MAX_GENERATED_TAGS);
}
