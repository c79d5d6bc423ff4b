/**
 * The subset of moment's format tokens that `date` typed properties use, in local time, so the
 * runtime needs no moment dependency. `[text]` is a literal, as in moment; any other character
 * is copied unchanged.
 */
const TOKENS = /\[([^\]]*)\]|YYYY|YY|SSS|MM|M|DD|D|HH|H|mm|ss|Z/g;

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

function offset(date: Date): string {
  const minutes = -date.getTimezoneOffset();
  const sign = minutes < 0 ? '-' : '+';
  const abs = Math.abs(minutes);
  return `${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}

export function formatDate(date: Date, format: string): string {
  return format.replace(TOKENS, (token: string, literal: string | undefined) => {
    if (literal !== undefined) return literal;
    switch (token) {
      case 'YYYY': return pad(date.getFullYear(), 4);
      case 'YY': return pad(date.getFullYear() % 100);
      case 'SSS': return pad(date.getMilliseconds(), 3);
      case 'MM': return pad(date.getMonth() + 1);
      case 'M': return String(date.getMonth() + 1);
      case 'DD': return pad(date.getDate());
      case 'D': return String(date.getDate());
      case 'HH': return pad(date.getHours());
      case 'H': return String(date.getHours());
      case 'mm': return pad(date.getMinutes());
      case 'ss': return pad(date.getSeconds());
      default: return offset(date);
    }
  });
}
