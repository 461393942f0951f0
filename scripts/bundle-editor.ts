export async function bundleEditor(): Promise<void> {}
