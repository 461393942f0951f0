/**
 * What is wrong with a `template` value of `partnerTxId`, or "" when nothing is: the rules of
 * nodes/shared/business-key.ts `parsePartnerTxIdTemplate`, checked in the browser as the runtime
 * checks them at deploy. Each `{{path}}` must close, hold a msg property path, and at least one
 * must be there (fixed text is every msg the same payment: the str type).
 */
export function templateProblem(template: string): string {
  let i = 0;
  let placeholders = 0;
  while (i < template.length) {
    if (template.substr(i, 2) === '{{') {
      const end = template.indexOf('}}', i + 2);
      if (end < 0) {
        return '"{{" at position ' + i + ' has no closing "}}"';
      }
      const inner = template.slice(i + 2, end);
      if (/[{}]/.test(inner)) {
        return '"{{" at position ' + i + ' has no closing "}}" before the next brace';
      }
      const path = inner.trim();
      if (!path) {
        return 'empty placeholder at position ' + i + ': write the msg property, e.g. {{payload.invoice}}';
      }
      const valid = RED.utils.validatePropertyExpression(path.indexOf('msg.') === 0 ? path.slice(4) : path);
      if (valid !== true) {
        return '{{' + path + '}} is not a msg property';
      }
      placeholders++;
      i = end + 2;
    } else if (template.substr(i, 2) === '}}') {
      return '"}}" at position ' + i + ' has no opening "{{"';
    } else if (template[i] === '{' || template[i] === '}') {
      return 'single "' + template[i] + '" at position ' + i + ': a placeholder is written {{path}}';
    } else {
      i++;
    }
  }
  return placeholders ? '' : 'no {{placeholder}}: fixed text makes every msg the same payment (choose the str type if that is really meant)';
}
