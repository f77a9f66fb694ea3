/** Hands a file the page holds to the browser as a download named `name`. */
export function saveFile(blob: Blob, name: string) {
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  // Revoked later, not at once: the browser may still be reading it.
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
