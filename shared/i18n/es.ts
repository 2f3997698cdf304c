import type { en } from "./en";

/** Español. */
export const es: Record<keyof typeof en, string> = {
  "scope.login.label": "Iniciar sesión",
  "scope.login.description": "Iniciar sesión en un servicio en tu nombre.",
  "scope.purchase.label": "Hacer compras",
  "scope.purchase.description": "Comprar productos o servicios a un comercio, dentro del límite que fijes.",
  "scope.payment.label": "Hacer pagos",
  "scope.payment.description": "Pagar facturas o enviar pagos a un beneficiario, dentro del límite que fijes.",
  "scope.task.label": "Realizar una tarea",
  "scope.task.description": "Realizar una tarea definida, solo en los comercios, categorías o países que permitas.",
  "scope.sign.label": "Firmar documentos",
  "scope.sign.description": "Firmar contratos o formularios en tu nombre.",
  "scope.read.label": "Leer tu cuenta",
  "scope.read.description": "Leer información de la cuenta, como pedidos, extractos o reservas, sin cambiar nada.",
  "scope.message.label": "Enviar mensajes",
  "scope.message.description": "Enviar mensajes o solicitudes a un servicio en tu nombre.",
  "scope.booking.label": "Hacer reservas",
  "scope.booking.description": "Reservar citas, mesas o entradas que no requieren pago ahora.",
};
