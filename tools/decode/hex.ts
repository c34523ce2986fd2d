/** Hex text input of `herald decode --hex`. */

/** Parses hex text: whitespace, ':' and '-' separators and "0x" prefixes are ignored. Throws Error on other characters. */
export function parseHex(text: string): Buffer {
  const clean = text.replace(/0x/gi, '').replace(/[\s:-]/g, '');
  if (clean.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(clean)) throw new Error('hex input must be an even number of hex digits');
  return Buffer.from(clean, 'hex');
}
