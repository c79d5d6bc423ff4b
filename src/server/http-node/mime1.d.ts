// mime 1.x (the table Express 4's send and serve-static use) ships no types.
declare module 'mime' {
  const mime: {
    lookup(path: string, fallback?: string): string;
    charsets: { lookup(type: string, fallback?: string): string | undefined };
  };
  export = mime;
}
