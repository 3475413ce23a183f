/**
 * `map.set(key, value)` in a map that holds at most `max` entries: a new key past that drops the
 * oldest first (a Map iterates in insertion order). For small memos of per-credential work.
 */
export function keep<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  if (map.size >= max && !map.has(key)) map.delete(map.keys().next().value!);
  map.set(key, value);
}
