// Minimal typing for the parts of seek-bzip (MIT, npm) that herald decode uses.
declare module 'seek-bzip' {
  const Bunzip: {
    /** Decompresses a whole bzip2 buffer; `multistream` continues over concatenated streams. Throws on bad data. */
    decode(input: Buffer | Uint8Array, output?: Buffer | number, multistream?: boolean): Buffer;
  };
  export default Bunzip;
}
