/**
 * MQTT-style topic filters, as the editor subscribes: `+` matches one level, a trailing `#` any
 * number of levels (including none: `notification/#` matches `notification`).
 */
export function topicMatches(filter: string, topic: string): boolean {
  if (filter === topic || filter === '#') return true;
  const f = filter.split('/');
  const t = topic.split('/');
  for (let i = 0; i < f.length; i++) {
    if (f[i] === '#') return i === f.length - 1;
    if (i >= t.length) return false;
    if (f[i] !== '+' && f[i] !== t[i]) return false;
  }
  return f.length === t.length;
}
