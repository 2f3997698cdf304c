/** The service-binding name under which the local router reaches a function's worker. */
export function bindingName(functionName: string): string {
  return `FN_${functionName.replace(/-/g, "_").toUpperCase()}`;
}
