// The oracle of Herald's differential JSONLogic test: json-logic-js 2.0.5 with
// the operations Novu registers at start, transcribed from
// libs/application-generic/src/services/query-parser/query-parser.service.ts
// (github.com/novuhq/novu) with its TypeScript types removed.
//
// stdin: a JSON array of {rule, data, now} (now an ISO instant that new Date()
// and Date.now() return); stdout: a JSON array of {result} or {error}. Values
// JSON cannot carry are encoded: {"$num": "NaN" | "Infinity" | "-Infinity" |
// "-0"}, {"$undefined": true}, {"$function": name}.
import jsonLogic from 'json-logic-js';

let nowMs = Date.now();
const RealDate = Date;
class FakeDate extends RealDate {
  constructor(...args) {
    if (args.length === 0) super(nowMs);
    else super(...args);
  }
  static now() {
    return nowMs;
  }
}
globalThis.Date = FakeDate;
// The "log" operation prints with console.log; keep stdout for the results.
console.log = (...args) => process.stderr.write(`${args.map(String).join(' ')}\n`);

// ---- query-parser.service.ts, as is ----

function validateStringInput(dataInput, ruleValue) {
  if (typeof dataInput !== 'string' || typeof ruleValue !== 'string') {
    return { isValid: false };
  }

  return { isValid: true, input: dataInput, value: ruleValue };
}

function validateRangeInput(dataInput, ruleValue) {
  if (!Array.isArray(ruleValue) || ruleValue.length !== 2) {
    return { isValid: false };
  }

  if (typeof dataInput !== 'number') {
    return { isValid: false };
  }

  const [min, max] = ruleValue;
  const valid = typeof min === 'number' && typeof max === 'number';

  return { isValid: valid, min, max };
}

function validateBooleanInput(dataInput) {
  if (typeof dataInput !== 'boolean' && dataInput !== 'true' && dataInput !== 'false') {
    return { isValid: false };
  }

  return { isValid: true, input: typeof dataInput === 'boolean' ? dataInput : dataInput === 'true' };
}

function validateRelativeDateInput(ruleValue) {
  if (typeof ruleValue !== 'object' || ruleValue === null) {
    return { isValid: false };
  }

  const value = ruleValue;
  if (typeof value.amount !== 'number' || value.amount <= 0) {
    return { isValid: false };
  }

  const validUnits = ['minutes', 'hours', 'days', 'weeks', 'months', 'years'];
  if (typeof value.unit !== 'string' || !validUnits.includes(value.unit)) {
    return { isValid: false };
  }

  return {
    isValid: true,
    amount: value.amount,
    unit: value.unit,
  };
}

function calculateRelativeDate(amount, unit, fromDate = new Date()) {
  const date = new Date(fromDate);

  switch (unit) {
    case 'minutes':
      date.setMinutes(date.getMinutes() - amount);
      break;
    case 'hours':
      date.setHours(date.getHours() - amount);
      break;
    case 'days':
      date.setDate(date.getDate() - amount);
      break;
    case 'weeks':
      date.setDate(date.getDate() - amount * 7);
      break;
    case 'months':
      date.setMonth(date.getMonth() - amount);
      break;
    case 'years':
      date.setFullYear(date.getFullYear() - amount);
      break;
    default:
      // fallback to days if unit is not recognized
      date.setDate(date.getDate() - amount);
      break;
  }

  return date;
}

function getToleranceMs(unit) {
  switch (unit) {
    case 'minutes':
      return 60 * 1000; // ±1 minute tolerance
    case 'hours':
      return 60 * 60 * 1000; // ±1 hour tolerance
    case 'days':
    case 'weeks':
    case 'months':
      return 24 * 60 * 60 * 1000; // ±1 day tolerance
    case 'years':
      return 7 * 24 * 60 * 60 * 1000; // ±1 week tolerance
    default:
      return 24 * 60 * 60 * 1000; // default to 1 day
  }
}

function validateComparison(a, b) {
  // handle boolean values and string representations of booleans
  const booleanA = validateBooleanInput(a);
  const booleanB = validateBooleanInput(b);
  if (booleanA.isValid && booleanB.isValid) {
    return { isValid: true, a: booleanA.input, b: booleanB.input };
  }

  // try to convert to numbers if possible
  const numA = Number(a);
  const numB = Number(b);
  if (!Number.isNaN(numA) && !Number.isNaN(numB)) {
    return { isValid: true, a: numA, b: numB };
  }

  // handle dates
  if (typeof a === 'string' && typeof b === 'string') {
    const dateA = new Date(a);
    const dateB = new Date(b);

    if (!Number.isNaN(dateA.getTime()) && !Number.isNaN(dateB.getTime())) {
      return { isValid: true, a: dateA.getTime(), b: dateB.getTime() };
    }
  }

  return { isValid: false };
}

function createStringOperator(evaluator) {
  return (dataInput, ruleValue) => {
    const validation = validateStringInput(dataInput, ruleValue);
    if (!validation.isValid) return false;

    return evaluator(validation.input, validation.value);
  };
}

const initializeCustomOperators = () => {
  jsonLogic.add_operation('=', (dataInput, ruleValue) => {
    const result = jsonLogic.apply({ '==': [dataInput, ruleValue] }, {});

    return typeof result === 'boolean' ? result : false;
  });

  jsonLogic.add_operation(
    'startsWith',
    createStringOperator((input, value) => input.startsWith(value))
  );

  jsonLogic.add_operation(
    'endsWith',
    createStringOperator((input, value) => input.endsWith(value))
  );

  jsonLogic.add_operation(
    'contains',
    createStringOperator((input, value) => input.includes(value))
  );

  jsonLogic.add_operation(
    'doesNotContain',
    createStringOperator((input, value) => !input.includes(value))
  );

  jsonLogic.add_operation(
    'doesNotBeginWith',
    createStringOperator((input, value) => !input.startsWith(value))
  );

  jsonLogic.add_operation(
    'doesNotEndWith',
    createStringOperator((input, value) => !input.endsWith(value))
  );

  jsonLogic.add_operation('containsAny', (dataInput, ruleValue) => {
    if (!Array.isArray(dataInput) || !Array.isArray(ruleValue)) return false;

    return dataInput.some((item) => ruleValue.includes(item));
  });

  jsonLogic.add_operation('doesNotContainAny', (dataInput, ruleValue) => {
    if (!Array.isArray(dataInput) || !Array.isArray(ruleValue)) return false;

    return !dataInput.some((item) => ruleValue.includes(item));
  });

  jsonLogic.add_operation('null', (dataInput) => dataInput === null);

  jsonLogic.add_operation('notNull', (dataInput) => dataInput !== null);

  jsonLogic.add_operation(
    'notIn',
    (dataInput, ruleValue) => Array.isArray(ruleValue) && !ruleValue.includes(dataInput)
  );

  jsonLogic.add_operation('between', (dataInput, ruleValue) => {
    const validation = validateRangeInput(dataInput, ruleValue);

    if (!validation.isValid) {
      return false;
    }

    return dataInput >= validation.min && dataInput <= validation.max;
  });

  jsonLogic.add_operation('notBetween', (dataInput, ruleValue) => {
    const validation = validateRangeInput(dataInput, ruleValue);

    if (!validation.isValid) {
      return false;
    }

    return dataInput < validation.min || dataInput > validation.max;
  });

  jsonLogic.rm_operation('<');
  jsonLogic.add_operation('<', (a, b) => {
    const validation = validateComparison(a, b);
    if (!validation.isValid) return false;

    return validation.a < validation.b;
  });

  jsonLogic.rm_operation('>');
  jsonLogic.add_operation('>', (a, b) => {
    const validation = validateComparison(a, b);
    if (!validation.isValid) return false;

    return validation.a > validation.b;
  });

  jsonLogic.rm_operation('<=');
  jsonLogic.add_operation('<=', (first, second, third) => {
    // handle three argument case (typically used in between operations)
    if (third !== undefined) {
      const validation1 = validateComparison(first, second);
      const validation2 = validateComparison(second, third);
      if (!validation1.isValid || !validation2.isValid) return false;

      return validation1.a <= validation1.b && validation1.b <= validation2.b;
    }

    const validation = validateComparison(first, second);
    if (!validation.isValid) return false;

    return validation.a <= validation.b;
  });

  jsonLogic.rm_operation('>=');
  jsonLogic.add_operation('>=', (a, b) => {
    const validation = validateComparison(a, b);
    if (!validation.isValid) return false;

    return validation.a >= validation.b;
  });

  jsonLogic.rm_operation('==');
  jsonLogic.add_operation('==', (a, b) => {
    const validation = validateComparison(a, b);
    if (!validation.isValid) {
      // fall back to strict equality for other types
      return a === b;
    }

    return validation.a === validation.b;
  });

  jsonLogic.rm_operation('!=');
  jsonLogic.add_operation('!=', (a, b) => {
    const validation = validateComparison(a, b);
    if (!validation.isValid) {
      // fall back to strict inequality for other types
      return a !== b;
    }

    return validation.a !== validation.b;
  });

  jsonLogic.add_operation('moreThanXAgo', (dataInput, ruleValue) => {
    const validation = validateRelativeDateInput(ruleValue);
    if (!validation.isValid) return false;

    const inputDate = new Date(dataInput);
    if (Number.isNaN(inputDate.getTime())) return false;

    const targetDate = calculateRelativeDate(validation.amount, validation.unit);

    return inputDate < targetDate;
  });

  jsonLogic.add_operation('lessThanXAgo', (dataInput, ruleValue) => {
    const validation = validateRelativeDateInput(ruleValue);
    if (!validation.isValid) return false;

    const inputDate = new Date(dataInput);
    if (Number.isNaN(inputDate.getTime())) return false;

    const targetDate = calculateRelativeDate(validation.amount, validation.unit);

    return inputDate >= targetDate;
  });

  jsonLogic.add_operation('withinLast', (dataInput, ruleValue) => {
    const validation = validateRelativeDateInput(ruleValue);
    if (!validation.isValid) return false;

    const inputDate = new Date(dataInput);
    if (Number.isNaN(inputDate.getTime())) return false;

    const targetDate = calculateRelativeDate(validation.amount, validation.unit);
    const now = new Date();

    return inputDate >= targetDate && inputDate <= now;
  });

  jsonLogic.add_operation('notWithinLast', (dataInput, ruleValue) => {
    const validation = validateRelativeDateInput(ruleValue);
    if (!validation.isValid) return false;

    const inputDate = new Date(dataInput);
    if (Number.isNaN(inputDate.getTime())) return false;

    const targetDate = calculateRelativeDate(validation.amount, validation.unit);

    return inputDate < targetDate;
  });

  jsonLogic.add_operation('exactlyXAgo', (dataInput, ruleValue) => {
    const validation = validateRelativeDateInput(ruleValue);
    if (!validation.isValid) return false;

    const inputDate = new Date(dataInput);
    if (Number.isNaN(inputDate.getTime())) return false;

    const targetDate = calculateRelativeDate(validation.amount, validation.unit);
    const tolerance = getToleranceMs(validation.unit);

    return Math.abs(inputDate.getTime() - targetDate.getTime()) <= tolerance;
  });
};

initializeCustomOperators();

// ---- the harness ----

function encode(v) {
  if (v === undefined) return { $undefined: true };
  if (typeof v === 'number') {
    if (Number.isNaN(v)) return { $num: 'NaN' };
    if (v === Infinity) return { $num: 'Infinity' };
    if (v === -Infinity) return { $num: '-Infinity' };
    if (Object.is(v, -0)) return { $num: '-0' };
    return v;
  }
  if (typeof v === 'function') return { $function: v.name };
  if (Array.isArray(v)) return v.map(encode);
  if (v !== null && typeof v === 'object') {
    const out = {};
    for (const k of Object.keys(v)) out[k] = encode(v[k]);
    return out;
  }
  return v;
}

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const cases = JSON.parse(Buffer.concat(chunks).toString('utf8'));
const results = cases.map(({ rule, data, now }) => {
  nowMs = RealDate.parse(now);
  try {
    return { result: encode(jsonLogic.apply(rule, data)) };
  } catch (e) {
    return { error: String(e && e.message ? e.message : e) };
  }
});
process.stdout.write(JSON.stringify(results));
