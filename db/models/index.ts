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
export { BillingRun, type BillingRunStatus } from './billing-run.js';
export { ExternalEmailAccount, type EmailSyncStatus } from './external-email-account.js';
export { CommunicationMessage, type CommunicationChannel, type CommunicationStatus } from './communication-message.js';
export { CommunicationAttachment } from './communication-attachment.js';
export { WabotSetting } from './wabot-setting.js';
export { WabotAccount } from './wabot-account.js';
export { WabotGroup } from './wabot-group.js';
export { InventoryItem, type InventoryItemType, type InventoryTracking } from './inventory-item.js';
export { InventoryLocation, type InventoryLocationType } from './inventory-location.js';
export { Supplier } from './supplier.js';
export {
  InventoryRequest,
  type InventoryRequestStatus,
  type InventoryRequestType,
  type InventoryReferenceType,
} from './inventory-request.js';
export { InventoryCount } from './inventory-count.js';
export { ApkKeystore, type ApkKeystoreKind } from './apk-keystore.js';
export { ApkAppConfig } from './apk-app-config.js';
export { ApkBuild, type ApkBuildStatus } from './apk-build.js';
