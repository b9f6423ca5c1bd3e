// Where a deleted account lands: the sign-in page, with a notice that the account is gone.
import { ACCOUNT_DATA_MESSAGES } from '@daybook/contracts';
import { Banner } from '../../components/Banner.tsx';
import { LoginPage } from '../auth/LoginPage.tsx';
import './account-data.css';

export function AccountDeletedPage() {
  return (
    <>
      <div className="container account-deleted-notice">
        <Banner variant="success">{ACCOUNT_DATA_MESSAGES.deleted} Thank you for using Daybook.</Banner>
      </div>
      <LoginPage />
    </>
  );
}
