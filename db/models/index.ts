/** Objection models, singular PascalCase, plural snake_case tables (DESIGN.md §3). */
export { Tenant } from './tenant.js';
export { Permission } from './permission.js';
export { Role } from './role.js';
export { User } from './user.js';
export { AuthToken } from './auth-token.js';
export { Package } from './package.js';
export { Customer } from './customer.js';
export { Invoice } from './invoice.js';
export { Ticket } from './ticket.js';
export { Olt } from './olt.js';
export { Onu } from './onu.js';
export { AuditLog } from './audit-log.js';
export { Schedule, type ScheduleStatus } from './schedule.js';
export { TicketComment, type TicketCommentKind } from './ticket-comment.js';
export { TicketAttachment } from './ticket-attachment.js';
export { TicketCheckIn } from './ticket-check-in.js';
export { HomeBase } from './home-base.js';
export { Nas } from './nas.js';
