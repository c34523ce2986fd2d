// Minimal typing for the part of unbzip2-stream (MIT, npm) that herald decode uses.
declare module 'unbzip2-stream' {
  import type { Stream } from 'node:stream';
  /**
   * A classic (`through`) stream: write() compressed chunks, end(); emits 'data' with decompressed blocks, 'end',
   * and 'error' on bad or truncated data (concatenated bzip2 streams are read one after the other).
   */
  interface Bunzip2Stream extends Stream {
    write(chunk: Buffer): boolean;
    end(): void;
  }
  function unbzip2Stream(): Bunzip2Stream;
  export default unbzip2Stream;
}
