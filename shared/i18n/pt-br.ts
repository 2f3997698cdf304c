import type { en } from "./en";

/** Português do Brasil. */
export const ptBR: Record<keyof typeof en, string> = {
  "scope.login.label": "Entrar",
  "scope.login.description": "Entrar em um serviço em seu nome.",
  "scope.purchase.label": "Fazer compras",
  "scope.purchase.description": "Comprar produtos ou serviços de um estabelecimento, dentro do limite que você definir.",
  "scope.payment.label": "Fazer pagamentos",
  "scope.payment.description": "Pagar contas ou enviar pagamentos a um favorecido, dentro do limite que você definir.",
  "scope.task.label": "Executar uma tarefa",
  "scope.task.description": "Executar uma tarefa definida, apenas nos estabelecimentos, categorias ou países que você permitir.",
  "scope.sign.label": "Assinar documentos",
  "scope.sign.description": "Assinar contratos ou formulários em seu nome.",
  "scope.read.label": "Ler sua conta",
  "scope.read.description": "Ler informações da conta, como pedidos, extratos ou reservas, sem alterar nada.",
  "scope.message.label": "Enviar mensagens",
  "scope.message.description": "Enviar mensagens ou solicitações a um serviço em seu nome.",
  "scope.booking.label": "Fazer reservas",
  "scope.booking.description": "Reservar consultas, mesas ou ingressos que não exigem pagamento agora.",
};
