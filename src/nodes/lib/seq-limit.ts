/**
 * Node-RED's `nodeMessageBufferMaxLength`: how many messages a buffering node (delay, sort,
 * batch) may hold before it drops them with an error. 0 or absent means no limit.
 */
export function bufferLimit(settings: Record<string, unknown>): number {
  const value = Number(settings.nodeMessageBufferMaxLength);
  return Number.isFinite(value) && value > 0 ? value : 0;
}
