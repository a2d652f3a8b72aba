// How long a mailed link works, as a person reads it: "30 minutes", "24 hours", "7 days" rather than "1440 minutes".
// The unit is the largest that still reads as a number of at least two (minutes under 2 hours, hours under 2 days,
// else days); a duration that is no whole number of its unit is rounded down, so a mail never promises longer than
// the link works.

const minutesPerHour = 60
const minutesPerDay = 24 * minutesPerHour

const counted = (count: number, unit: string) => `${count} ${unit}${count === 1 ? '' : 's'}`

/** A whole number of minutes (at least 1) as text: 30 -> "30 minutes", 1440 -> "24 hours", 4320 -> "3 days". */
export function formatDuration(minutes: number): string {
  if (minutes < 2 * minutesPerHour) return counted(minutes, 'minute')
  if (minutes < 2 * minutesPerDay) return counted(Math.floor(minutes / minutesPerHour), 'hour')
  return counted(Math.floor(minutes / minutesPerDay), 'day')
}
