import { describe, expect, it } from "vitest";
import { dateJson } from "../../plugins/core-store/sessions.js";

/**
 * plugins/core-store/sessions.ts dateJson: get-session writes a stored date's JSON without a
 * Date when the text already is toISOString's form of a real day and time; it must always be
 * JSON.stringify(new Date(text)), whatever the text.
 */
describe("dateJson", () => {
  const same = (text: string) => expect(dateJson(text), text).toBe(JSON.stringify(new Date(text)));

  it("is JSON.stringify(new Date(text)) at every edge of the form", () => {
    const texts = [
      "2026-11-26T21:06:01.908Z",
      "2024-02-29T00:00:00.000Z", // a leap day
      "2026-02-29T00:00:00.000Z", // not one: Date moves it to March 1
      "2026-02-30T12:00:00.000Z",
      "2000-02-29T23:59:59.999Z", // divisible by 400: leap
      "1900-02-29T00:00:00.000Z", // by 100 only: not
      "2026-04-31T00:00:00.000Z",
      "2026-12-31T23:59:59.999Z",
      "2026-13-01T00:00:00.000Z",
      "2026-00-10T00:00:00.000Z",
      "2026-01-00T00:00:00.000Z",
      "2026-01-01T24:00:00.000Z", // the end of the day: Date moves it on
      "2026-01-01T23:60:00.000Z",
      "2026-01-01T23:59:60.000Z",
      "0000-01-01T00:00:00.000Z",
      "9999-12-31T23:59:59.999Z",
      "2026-01-01T00:00:00Z", // other spellings Date reads
      "2026-01-01T00:00:00.000+01:00",
      "2026-01-01 00:00:00",
      "2026-01-01",
      "+002026-01-01T00:00:00.000Z",
      "not a date",
      "",
    ];
    for (const text of texts) same(text);
  });

  it("is JSON.stringify(new Date(text)) for random instants over ten thousand years", () => {
    for (let i = 0; i < 5000; i++) same(new Date(Math.floor(Math.random() * 253402300799999)).toISOString());
  });
});
