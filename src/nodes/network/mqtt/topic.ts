/** MQTT topic filters and names, as Node-RED's mqtt nodes check and match them. */

const SHARE_PREFIX = /^\$share\/[^#+/]+\/(.*)/;
const patterns = new Map<string, RegExp>();

/** The regular expression a filter (with `+`, `#` and `$share/<group>/`) stands for; cached per filter. */
function patternOf(filter: string): RegExp {
  let re = patterns.get(filter);
  if (!re) {
    const plain = filter.startsWith('$share') ? filter.replace(SHARE_PREFIX, '$1') : filter;
    const body = plain
      .replace(/([[\]?()\\$^*.|])/g, '\\$1')
      .replace(/\+/g, '[^/]+')
      .replace(/\/#$/, '(/.*)?');
    re = new RegExp(`^${body}$`);
    patterns.set(filter, re);
  }
  return re;
}

/** Whether a message published to `topic` matches the subscription `filter`. */
export function matchTopic(filter: string, topic: string): boolean {
  return filter === '#' || patternOf(filter).test(topic);
}

export function isValidSubscriptionTopic(topic: unknown): topic is string {
  return typeof topic === 'string' && /^(#$|(\+|[^+#]*)(\/(\+|[^+#]*))*(\/(\+|#|[^+#]*))?$)/.test(topic);
}

export function isValidPublishTopic(topic: unknown): topic is string {
  return typeof topic === 'string' && topic.length > 0 && !/[+#\b\f\n\r\t\v\0]/.test(topic);
}
