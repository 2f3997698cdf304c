/** English: the reference catalogue. Keys are stable; every other locale translates every key. */
export const en = {
  "scope.login.label": "Sign in",
  "scope.login.description": "Sign in to a service on your behalf.",
  "scope.purchase.label": "Make purchases",
  "scope.purchase.description": "Buy goods or services from a merchant, within the ceiling you set.",
  "scope.payment.label": "Make payments",
  "scope.payment.description": "Pay bills or send payments to a payee, within the ceiling you set.",
  "scope.task.label": "Carry out a task",
  "scope.task.description": "Carry out a defined task, only at the merchants, categories or countries you allow.",
  "scope.sign.label": "Sign documents",
  "scope.sign.description": "Sign agreements or forms on your behalf.",
  "scope.read.label": "Read your account",
  "scope.read.description": "Read account information such as orders, statements or bookings, without changing anything.",
  "scope.message.label": "Send messages",
  "scope.message.description": "Send messages or requests to a service on your behalf.",
  "scope.booking.label": "Make bookings",
  "scope.booking.description": "Reserve appointments, tables or tickets that need no payment now.",
} as const;
